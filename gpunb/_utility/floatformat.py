"""NumPy's float formatting, ``format_float_positional`` and ``format_float_scientific``
(Dragon4), of a Python or NumPy scalar or of a 0-d GPU array.

A 0-d GPU array is read back first, as the NumPy scalar it holds: gpunb returns 0-d arrays
where NumPy returns scalars (``a[i]``, ``a.max()``), so ``gp.format_float_positional(a.max())``
is ``np.format_float_positional(host.max())``, its dtype's shortest repr (``'0.1'`` for
float32 0.1). Given the GPU array itself, NumPy would take ``float(x)``: a read back all the
same, formatted as a float64 (``'0.10000000149011612'``), and a 1-element array of any
shape (where NumPy 2 refuses a host array that is not 0-d)."""

from __future__ import annotations

import numpy as np

from .._creation.from_data import asnumpy as _host


def _scalar(x):
    """``x`` itself, or the NumPy scalar of a 0-d GPU array (NumPy's TypeError for any other
    GPU array, read nothing)."""
    if hasattr(x, "__cuda_array_interface__"):
        if len(x.shape):
            raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
        return _host(x)[()]
    return x


def format_float_positional(x, precision=None, unique=True, fractional=True, trim="k",
                            sign=False, pad_left=None, pad_right=None, min_digits=None) -> str:
    """A floating-point scalar in positional notation (numpy.format_float_positional); a 0-d
    GPU array is read back as its NumPy scalar."""
    return np.format_float_positional(_scalar(x), precision=precision, unique=unique,
                                      fractional=fractional, trim=trim, sign=sign,
                                      pad_left=pad_left, pad_right=pad_right,
                                      min_digits=min_digits)


def format_float_scientific(x, precision=None, unique=True, trim="k", sign=False,
                            pad_left=None, exp_digits=None, min_digits=None) -> str:
    """A floating-point scalar in scientific notation (numpy.format_float_scientific); a 0-d
    GPU array is read back as its NumPy scalar."""
    return np.format_float_scientific(_scalar(x), precision=precision, unique=unique,
                                      trim=trim, sign=sign, pad_left=pad_left,
                                      exp_digits=exp_digits, min_digits=min_digits)
