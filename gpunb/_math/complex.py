"""Handling complex numbers: ``real``, ``imag`` (views, as the attributes), ``angle``;
``conj``/``conjugate`` are ufuncs."""

from __future__ import annotations

import numpy as np

from ..core import args
from .ufuncs import UFUNCS


def real(val):
    """The real part: a view (numpy.real)."""
    return args.array(val, "real").real


def imag(val):
    """The imaginary part: a view of a complex array, zeros otherwise (numpy.imag)."""
    return args.array(val, "imag").imag


def angle(z, deg=False):
    """The counterclockwise angle from the positive real axis (numpy.angle), in radians, or
    degrees with ``deg``: ``arctan2(z.imag, z.real)``."""
    x = args.array(z, "angle")
    a = UFUNCS["arctan2"](x.imag, x.real) if x.dtype.kind == "c" else UFUNCS["arctan2"](0, x)
    return a * (180 / np.pi) if deg else a
