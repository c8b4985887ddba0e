"""Padding: ``pad`` (numpy.pad), NumPy's own algorithm on GPU arrays.

The input is written into the middle of a new array by one copy; then, axis by axis, each
side's pad area is filled from what is already there: a value (constant), the edge, a
reflection or a wrap of the data (chunk by chunk when the pad is wider than the data, as
NumPy does), a linear ramp, or a statistic of the edge region (a reduction). Each border fill
is one small kernel over the border only, so the whole costs about one copy of the data. The
regions, their order (later axes' pads cover the corners) and the arithmetic are NumPy's, so
are the results.
"""

from __future__ import annotations

import numpy as np
from numpy.lib._arraypad_impl import _as_pairs   # NumPy's own pairing rules and messages

from ..core import args, memo
from ..core.kernels.rearrange import run as rearrange
from ..core.ndarray import ndarray
from .._math.ufuncs import UFUNCS
from .._statistics.meanvar import mean
from .._statistics.order import amax, amin
from .._statistics.quantiles import median

_ALLOWED = {
    "empty": [], "edge": [], "wrap": [],
    "constant": ["constant_values"],
    "linear_ramp": ["end_values"],
    "maximum": ["stat_length"], "mean": ["stat_length"], "median": ["stat_length"],
    "minimum": ["stat_length"],
    "reflect": ["reflect_type"], "symmetric": ["reflect_type"],
}
_STATS = {"maximum": amax, "minimum": amin, "mean": mean, "median": median}


def _at(sl, axis):
    return (slice(None),) * axis + (sl,) + (...,)


def _view_roi(padded, area, axis):
    """The part of ``padded`` that axis ``axis`` pads: every earlier axis whole (their pads
    are done), every later axis only over the data."""
    return padded[(slice(None),) * (axis + 1) + area[axis + 1:]]


def _set_pad_area(padded, axis, width_pair, value_pair):
    padded[_at(slice(None, width_pair[0]), axis)] = value_pair[0]
    padded[_at(slice(padded.shape[axis] - width_pair[1], None), axis)] = value_pair[1]


def _get_edges(padded, axis, width_pair):
    left = width_pair[0]
    right = padded.shape[axis] - width_pair[1]
    return (padded[_at(slice(left, left + 1), axis)],
            padded[_at(slice(right - 1, right), axis)])


def _ramp(start, edge, num, dtype, axis):
    """``numpy.linspace(start, edge, num, endpoint=False, dtype=dtype, axis=axis)`` for a
    scalar ``start`` and a GPU array ``edge`` (NumPy's steps, rounding and integer floor)."""
    dt = np.result_type(start, edge.dtype, 1.0)
    stop = edge.astype(dt)
    delta = UFUNCS["subtract"](stop, dt.type(start))
    y = _arange(num, dt).reshape((num,) + (1,) * delta.ndim)
    if num:
        step = delta / dt.type(num)
        if bool((step == 0).any().get()):       # NumPy's choice when a step underflows
            y = (y / dt.type(num)) * delta
        else:
            y = y * step
    else:
        y = y * delta
    UFUNCS["add"](y, start, out=y)              # in place, as NumPy's ``y += start``
    y = y.transpose(_move_first_to(axis, y.ndim))
    if np.issubdtype(dtype, np.integer):
        y = UFUNCS["floor"](y)
    return y.astype(dtype)


def _arange(num, dt):
    from .._creation.from_data import upload
    return upload(np.arange(num, dtype=dt))


def _move_first_to(axis, nd):
    perm = list(range(1, nd))
    perm.insert(axis, 0)
    return perm


def _get_linear_ramps(padded, axis, width_pair, end_value_pair):
    edges = _get_edges(padded, axis, width_pair)
    left, right = (_ramp(end, edge.squeeze(axis), width, padded.dtype, axis)
                   for end, edge, width in zip(end_value_pair, edges, width_pair))
    return left, right[_at(slice(None, None, -1), axis)]


def _get_stats(padded, axis, width_pair, length_pair, func, mode):
    left_index = width_pair[0]
    right_index = padded.shape[axis] - width_pair[1]
    max_length = right_index - left_index
    left_length, right_length = length_pair
    if left_length is None or max_length < left_length:
        left_length = max_length
    if right_length is None or max_length < right_length:
        right_length = max_length
    if (left_length == 0 or right_length == 0) and mode in ("maximum", "minimum"):
        raise ValueError("stat_length of 0 yields no value for padding")

    def stat(sl):
        s = func(padded[_at(sl, axis)], axis=axis, keepdims=True)
        if np.issubdtype(padded.dtype, np.integer) and s.dtype.kind == "f":
            s = UFUNCS["rint"](s)       # NumPy rounds an integer array's mean
        return s

    left = stat(slice(left_index, left_index + left_length))
    if left_length == right_length == max_length:
        return left, left
    return left, stat(slice(right_index - right_length, right_index))


def _set_reflect_both(padded, axis, width_pair, method, original_period, include_edge):
    left_pad, right_pad = width_pair
    old_length = padded.shape[axis] - right_pad - left_pad
    if include_edge:
        old_length = old_length // original_period * original_period
        edge_offset = 1
    else:
        old_length = (old_length - 1) // (original_period - 1) * (original_period - 1) + 1
        edge_offset = 0
        old_length -= 1
    if left_pad > 0:
        chunk_length = min(old_length, left_pad)
        stop = left_pad - edge_offset
        chunk = padded[_at(slice(stop + chunk_length, stop, -1), axis)]
        if method == "odd":
            chunk = 2 * padded[_at(slice(left_pad, left_pad + 1), axis)] - chunk
        padded[_at(slice(left_pad - chunk_length, left_pad), axis)] = chunk
        left_pad -= chunk_length
    if right_pad > 0:
        chunk_length = min(old_length, right_pad)
        start = -right_pad + edge_offset - 2
        chunk = padded[_at(slice(start, start - chunk_length, -1), axis)]
        if method == "odd":
            chunk = 2 * padded[_at(slice(-right_pad - 1, -right_pad), axis)] - chunk
        start = padded.shape[axis] - right_pad
        padded[_at(slice(start, start + chunk_length), axis)] = chunk
        right_pad -= chunk_length
    return left_pad, right_pad


def _set_wrap_both(padded, axis, width_pair, original_period):
    left_pad, right_pad = width_pair
    period = padded.shape[axis] - right_pad - left_pad
    period = period // original_period * original_period
    new_left = new_right = 0
    if left_pad > 0:
        end = left_pad + period
        chunk = padded[_at(slice(end - min(period, left_pad), end), axis)]
        if left_pad > period:
            area = _at(slice(left_pad - period, left_pad), axis)
            new_left = left_pad - period
        else:
            area = _at(slice(None, left_pad), axis)
        padded[area] = chunk
    if right_pad > 0:
        start = -right_pad - period
        chunk = padded[_at(slice(start, start + min(period, right_pad)), axis)]
        if right_pad > period:
            area = _at(slice(-right_pad, -right_pad + period), axis)
            new_right = right_pad - period
        else:
            area = _at(slice(-right_pad, None), axis)
        padded[area] = chunk
    return new_left, new_right


_width_memo = memo.table("padding.widths")     # (pad_width, ndim) -> pairs, for hashable ones


def _widths(pad_width, ndim):
    try:
        return _width_memo[pad_width, ndim]
    except (KeyError, TypeError):       # not seen yet, or unhashable (a list, an array)
        pass
    pairs = _pair_widths(pad_width, ndim)
    try:
        _width_memo[pad_width, ndim] = pairs
    except TypeError:
        pass
    return pairs


def _pair_widths(pad_width, ndim):
    if isinstance(pad_width, dict):
        seq = [(0, 0)] * ndim
        for axis, width in pad_width.items():
            if isinstance(width, int):
                seq[axis] = width, width
            elif isinstance(width, tuple) and len(width) == 2 and all(isinstance(w, int) for w in width):
                seq[axis] = width
            else:
                raise AssertionError(f"Expected code to be unreachable, but got: {width!r}")
        pad_width = seq
    pad_width = np.asarray(pad_width)
    if pad_width.dtype.kind != "i":
        raise TypeError("`pad_width` must be of integral type.")
    return [(int(a), int(b)) for a, b in _as_pairs(pad_width, ndim, as_index=True)]


def pad(array, pad_width, mode="constant", **kwargs):
    """``array`` padded by ``pad_width`` (an int, ``(before, after)``, one pair per axis, or a
    dict of axes) with values chosen by ``mode`` (numpy.pad): 'constant' (``constant_values``),
    'edge', 'linear_ramp' (``end_values``), 'maximum', 'mean', 'median', 'minimum'
    (``stat_length``), 'reflect', 'symmetric' (``reflect_type``), 'wrap', 'empty'."""
    x = args.array(array, "pad")
    widths = _widths(pad_width, x.ndim)
    if callable(mode):
        raise TypeError("pad: a callable mode runs Python per vector and is not supported on "
                        "gpunb arrays")
    try:
        unsupported = set(kwargs) - set(_ALLOWED[mode])
    except (KeyError, TypeError):
        raise ValueError(f"mode '{mode}' is not supported") from None
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if mode in ("maximum", "minimum") and x.size:     # NumPy's check, made before allocating
        if any(0 in lp for lp in _as_pairs(kwargs.get("stat_length"), x.ndim, as_index=True)):
            raise ValueError("stat_length of 0 yields no value for padding")
    if x.size == 0 and mode not in ("constant", "empty"):
        for axis, wp in enumerate(widths):
            if x.shape[axis] == 0 and any(wp):
                raise ValueError(f"can't extend empty axis {axis} using modes other than "
                                 "'constant' or 'empty'")
    order = "F" if x.ndim > 1 and x.flags.f_contiguous and not x.flags.c_contiguous else "C"
    if x.ndim and (mode == "constant" or (x.size and mode in ("edge", "wrap") or (
            x.size and mode in ("reflect", "symmetric") and kwargs.get("reflect_type") != "odd"))):
        # an index map per axis: one pass over the output (a copy's cost)
        consts = np.zeros((x.ndim, 2), x.dtype)
        if mode == "constant" and "constant_values" in kwargs:
            for d, pair in enumerate(_as_pairs(kwargs.get("constant_values", 0), x.ndim)):
                for side, v in enumerate(pair):
                    consts[d, side] = v       # NumPy's own assignment of the value
        return rearrange.pad(x, widths, mode, consts, order == "F")
    padded = ndarray(tuple(b + n + a for n, (b, a) in zip(x.shape, widths)), x.dtype, order=order)
    area = tuple(slice(b, b + n) for n, (b, a) in zip(x.shape, widths))
    padded[area] = x
    axes = range(padded.ndim)
    if mode == "constant":
        values = _as_pairs(kwargs.get("constant_values", 0), padded.ndim)
        for axis, wp, vp in zip(axes, widths, values):
            _set_pad_area(_view_roi(padded, area, axis), axis, wp, vp)
    elif mode == "empty":
        pass
    elif x.size == 0:
        pass        # nothing to extend from (and nothing to extend: checked above)
    elif mode == "edge":
        for axis, wp in zip(axes, widths):
            roi = _view_roi(padded, area, axis)
            _set_pad_area(roi, axis, wp, _get_edges(roi, axis, wp))
    elif mode == "linear_ramp":
        ends = _as_pairs(kwargs.get("end_values", 0), padded.ndim)
        for axis, wp, vp in zip(axes, widths, ends):
            roi = _view_roi(padded, area, axis)
            _set_pad_area(roi, axis, wp, _get_linear_ramps(roi, axis, wp, vp))
    elif mode in _STATS:
        lengths = _as_pairs(kwargs.get("stat_length"), padded.ndim, as_index=True)
        for axis, wp, lp in zip(axes, widths, lengths):
            roi = _view_roi(padded, area, axis)
            _set_pad_area(roi, axis, wp, _get_stats(roi, axis, wp, lp, _STATS[mode], mode))
    elif mode in ("reflect", "symmetric"):
        method = kwargs.get("reflect_type", "even")
        for axis, (left, right) in zip(axes, widths):
            if x.shape[axis] == 1 and (left > 0 or right > 0):
                _set_pad_area(padded, axis, (left, right), _get_edges(padded, axis, (left, right)))
                continue
            roi = _view_roi(padded, area, axis)
            while left > 0 or right > 0:
                left, right = _set_reflect_both(roi, axis, (left, right), method, x.shape[axis],
                                                mode == "symmetric")
    elif mode == "wrap":
        for axis, (left, right) in zip(axes, widths):
            roi = _view_roi(padded, area, axis)
            period = padded.shape[axis] - right - left
            while left > 0 or right > 0:
                left, right = _set_wrap_both(roi, axis, (left, right), period)
    return padded

