"""Other mathematical functions: ``clip``."""

from __future__ import annotations

from .ufuncs import UFUNCS


def clip(a, a_min=None, a_max=None, out=None, **kwargs):
    """``a`` limited to ``[a_min, a_max]`` (numpy.clip): ``minimum(maximum(a, a_min), a_max)``
    with NaN propagating; one bound may be None. Built of ufunc calls, so ``@fuse`` traces it."""
    if a_min is None and a_max is None:
        raise ValueError("One of max or min must be given")
    if a_min is None:
        return UFUNCS["minimum"](a, a_max, out=out, **kwargs)
    if a_max is None:
        return UFUNCS["maximum"](a, a_min, out=out, **kwargs)
    return UFUNCS["clip"](a, a_min, a_max, out=out, **kwargs)
