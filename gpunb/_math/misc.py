"""Other mathematical functions: ``clip``."""

from __future__ import annotations

from .ufuncs import UFUNCS


def clip(a, min=None, max=None, out=None, *, a_min=None, a_max=None, **kwargs):   # noqa: A002
    """``a`` limited to ``[min, max]`` (numpy.clip; ``a_min``/``a_max`` are NumPy's older
    names): ``minimum(maximum(a, min), max)`` with NaN propagating; a bound may be None (both:
    a copy, as NumPy 2 and the array API). Built of ufunc calls, so ``@fuse`` traces it."""
    if a_min is not None:
        if min is not None:
            raise TypeError("clip: pass min or a_min, not both")
        min = a_min     # noqa: A001
    if a_max is not None:
        if max is not None:
            raise TypeError("clip: pass max or a_max, not both")
        max = a_max     # noqa: A001
    if min is None and max is None:
        if out is None:
            return a.copy()
        out[...] = a
        return out
    if min is None:
        return UFUNCS["minimum"](a, max, out=out, **kwargs)
    if max is None:
        return UFUNCS["maximum"](a, min, out=out, **kwargs)
    return UFUNCS["clip"](a, min, max, out=out, **kwargs)
