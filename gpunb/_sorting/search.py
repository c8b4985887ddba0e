"""Searching: ``argmax``, ``argmin`` (the reduction family), ``where`` (elementwise)."""

from __future__ import annotations

from ..core.kernels.reduction.run import reduce
from ..core.ufunc import ufunc

_where = ufunc("where")     # the elementwise select: NumPy's result_type(x, y), broadcasting


def argmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the maximum (numpy.argmax): the first one; the first NaN if any."""
    return reduce("argmax", a, axis, None, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the minimum (numpy.argmin): the first one; the first NaN if any."""
    return reduce("argmin", a, axis, None, out, keepdims)


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the maximum ignoring NaN (numpy.nanargmax): NaN counts as -inf, as NumPy
    replaces it. An all-NaN slice raises NumPy's ValueError: deciding that reads one flag
    back from the GPU (queued after the result, so the call waits once). CuPy returns -1
    there instead of raising; gpunb keeps NumPy's error."""
    return _nanarg("nanargmax", a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the minimum ignoring NaN (numpy.nanargmin): NaN counts as +inf; an all-NaN
    slice raises NumPy's ValueError (one flag read back, see :func:`nanargmax`)."""
    return _nanarg("nanargmin", a, axis, out, keepdims)


_nanarg_fused: dict = {}      # axes -> a fused 'is any slice all NaN' reduction


def _nanarg(func, a, axis, out, keepdims):
    import math
    import operator

    import numpy as np

    from ..core import args
    from ..core.kernels.reduction import run as rrun

    x = args.array(a, func)
    base = func[3:]                         # argmax / argmin
    if x.dtype.kind not in "fc":            # no NaN to ignore
        return reduce(base, x, axis, None, out, keepdims)
    axes = args.axes(None if axis is None else operator.index(axis), x.ndim)
    K = math.prod(x.shape[d] for d in axes)
    rrun.check_empty(base, K)
    dt, rdt = x.dtype, np.dtype(np.intp)
    result = rrun._target(out, rrun.out_shape(x.shape, axes, keepdims), rdt, func)

    rrun.run(("reduce", func, dt, rdt), lambda no, nr: nanarg_kernel(func, dt, no, nr),
             [("array", x)], x.shape, axes, result, float(K), True)
    if x.size and _all_nan_somewhere(x, axes):
        raise ValueError("All-NaN slice encountered")
    return rrun._deliver(result, out)


def nanarg_kernel(func, dt, no, nr):
    """The reduction IR of nanargmax/nanargmin over ``dt``: NumPy's ``_replace_nan`` (NaN
    becomes -inf for argmax, +inf for argmin), then the arg reduction (first index wins)."""
    import numpy as np

    from ..core.kernels import ir
    from ..core.kernels.reduction.ir import kernel_name

    base, rdt = func[3:], np.dtype(np.intp)
    arg = ir.Arg(dt, 0)
    isnan = ir.Apply(np.dtype(bool), "isnan", (dt.name, "bool"), (arg,))
    fill = ir.Const(dt, -np.inf if base == "argmax" else np.inf)
    value = ir.Apply(dt, "where", ("bool", dt.name, dt.name, dt.name), (isnan, fill, arg))
    opnds = (ir.Operand(dt, "array"),)
    return ir.ReductionKernel(kernel_name(func, opnds, rdt, no, nr), opnds, value, base, rdt,
                              "none", no, nr)


def _all_nan_somewhere(x, axes) -> bool:
    """Whether some slice along ``axes`` is all NaN: one fused reduction (two when only some
    axes are reduced), then one flag read back."""
    from ..core.fusion.function import fuse
    from .._math.ufuncs import UFUNCS

    f = _nanarg_fused.get(axes)
    if f is None:
        isnan = UFUNCS["isnan"]

        def all_nan(v):
            return isnan(v).all(axis=axes)
        f = _nanarg_fused[axes] = fuse(all_nan)
    flags = f(x)
    return bool(flags if flags.ndim == 0 else reduce("any", flags))


def where(condition, x=None, y=None):
    """``x`` where ``condition`` holds, else ``y``, broadcast together (numpy.where); the
    result dtype is NumPy's ``result_type(x, y)`` (Python scalars weak). ``where(condition)``
    alone is ``nonzero(condition)``."""
    if x is None and y is None:      # NumPy: where(condition) is nonzero(condition)
        from .nonzero import nonzero

        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return _where(condition, x, y)
